package upgrade

import (
	"io"

	"github.com/logtool/logtool/index"
)

// rewritten tells whether the segment needed a new version.
func (c *upgradeConverter) rewritten() bool { return c.w != nil }

// verifyUpgrade checks a whole rewritten segment of convSize bytes.
func verifyUpgrade(rules *upgradeRules, orig io.ReaderAt, origSize int64, origName string,
	conv io.ReaderAt, convSize int64, convName string, base int64) (*index.Recovery, error) {
	v := newUpgradeVerifier(rules, orig, origSize, origName, conv, convName, base, index.NewRecovery(base, index.DefaultIntervalBytes))
	if err := v.check(convSize); err != nil {
		return nil, err
	}
	return v.finish()
}
