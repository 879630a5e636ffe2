package topicconfig

import "time"

var time0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
