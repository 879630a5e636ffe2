package commands

import (
	"github.com/logtool/logtool/dump"
)

// flagValues lists the words a flag takes, for the flags that take one of a
// few; the others (numbers, times, paths) get no candidates.
func flagValues(cmd, flag string) []string {
	switch flag {
	case "format":
		return commandFormats(cmd)
	case "key-decoder", "value-decoder":
		return []string{"string", "hex", "base64", "none"}
	case "kafka-version":
		return dump.Releases()
	case "compression":
		if cmd == "upgrade" {
			return []string{"keep", "none", "gzip", "snappy", "lz4", "zstd"}
		}
		return []string{"none", "gzip", "snappy", "lz4", "zstd"}
	case "timestamp-type":
		return []string{"create", "log-append"}
	case "append-time":
		return []string{"file-mtime"}
	case "clean-time":
		return []string{"unknown", "file-mtime"}
	case "to-magic":
		return []string{"1", "2"}
	case "magic":
		return []string{"0", "1", "2"}
	case "max-lag":
		switch cmd {
		case "compact":
			return []string{"unlimited"}
		case "grep":
			return []string{"topic"}
		}
	case "cleanup-policy":
		return []string{"delete", "compact", "compact,delete"}
	}
	return nil
}
