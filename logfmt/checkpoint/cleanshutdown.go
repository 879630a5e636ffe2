package checkpoint

import "github.com/logtool/logtool/logfmt"

// CleanShutdown is the content of a log directory's .kafka_cleanshutdown
// marker. Its presence alone tells a broker to skip log recovery; since
// Kafka 3.7 (KIP-966) it also holds the broker epoch the broker shut down
// with, which a KRaft broker sends when it registers again so that the
// controller knows the restart followed a clean shutdown.
type CleanShutdown struct {
	Empty       bool  // the empty marker of Kafka before 3.7
	Version     int32 // 0, the only version Kafka writes
	BrokerEpoch int64
}

// ReadCleanShutdown parses a .kafka_cleanshutdown file: empty, or the JSON
// object {"version":0,"brokerEpoch":N} of Kafka's CleanShutdownFileHandler.
// Like Kafka it needs an integer brokerEpoch, takes version as 0 when absent
// and ignores other fields; unlike Kafka it rejects anything after the
// object. A broker that cannot read the epoch still skips recovery but
// registers without it.
func ReadCleanShutdown(b []byte, file string) (CleanShutdown, error) {
	if len(b) == 0 {
		return CleanShutdown{Empty: true}, nil
	}
	fields, err := jsonFields(b, file)
	if err != nil {
		return CleanShutdown{}, err
	}
	var c CleanShutdown
	raw, ok := fields["brokerEpoch"]
	if !ok {
		return CleanShutdown{}, logfmt.Corruptf(file, 0, "no \"brokerEpoch\" field")
	}
	if c.BrokerEpoch, ok = parseInt(raw, 64); !ok {
		return CleanShutdown{}, logfmt.Corruptf(file, 0, "field \"brokerEpoch\" is %s, want an int64", excerpt(raw))
	}
	if raw, ok := fields["version"]; ok {
		v, ok := parseInt(raw, 32)
		if !ok {
			return CleanShutdown{}, logfmt.Corruptf(file, 0, "field \"version\" is %s, want an int32", excerpt(raw))
		}
		c.Version = int32(v)
	}
	return c, nil
}
