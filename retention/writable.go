package retention

import "fmt"

// checkWritable tells whether every directory a run changes can be changed
// (the log dir's root for its checkpoints, each partition dir for its
// segments), before the first change: a run that could move the log start
// checkpoint but then not delete the segments, or roll a log it cannot
// trim, would leave changes behind a command that failed. Partitions left
// alone (Skip) are not checked.
func checkWritable(logDir string, jobs []Job, check func(dir string) error) error {
	if err := check(logDir); err != nil {
		return fmt.Errorf("%s: nothing changed: %w", logDir, err)
	}
	for _, j := range jobs {
		if j.Skip != "" {
			continue
		}
		if err := check(j.Dir); err != nil {
			return fmt.Errorf("%s: nothing changed in %s: %w", j.Dir, logDir, err)
		}
	}
	return nil
}
