// Package segswap replaces a partition's segments the way Kafka's
// LocalLog.replaceSegments does, so that a crash at any step leaves a
// directory that both a broker's LogLoader and a re-run of logtool (Recover)
// turn into exactly the old or exactly the new segments.
//
// The protocol:
//
//  1. The new segments are written in full as "<name>.cleaned" files and
//     fsynced (the caller does this, naming files with CleanedPath).
//  2. Every new segment's files are renamed ".cleaned" → ".swap", highest base
//     offset first. While any ".cleaned" file remains, the loader deletes
//     every ".swap" at or above the lowest ".cleaned" offset — all of them,
//     thanks to the order — and the old segments stay.
//  3. The old segments' files are renamed to "<name>.deleted". From here on
//     every ".swap" is complete; the loader deletes ".deleted" files and
//     whatever old file lies in a swap segment's offset range.
//  4. Each ".swap" is renamed to its final name.
//  5. The ".deleted" files are removed, at once (Replace) or in the
//     background (Swap and a Sweeper), as Kafka does.
//
// Every rename goes through internal/safefile, which fsyncs the directory.
package segswap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Exts are the per-segment files, in the order Kafka renames them.
var Exts = []string{layout.LogExt, layout.IndexExt, layout.TimeIndexExt, layout.TxnIndexExt}

// CleanedPath is where a new segment file is written before the swap.
func CleanedPath(dir string, base int64, ext string) string {
	return filepath.Join(dir, layout.SegmentName(base, ext)+layout.CleanedSuffix)
}

// Replace installs the new segments (bases of fully written, fsynced
// ".cleaned" files) in place of the old ones.
func Replace(dir string, newBases []int64, old []layout.Segment) error {
	deleted, err := Swap(dir, newBases, old)
	if err != nil {
		return err
	}
	return removeAll(deleted)
}

// Swap is Replace up to step 4: it returns the ".deleted" files for the
// caller to remove, now or through a Sweeper. Until they are removed, a
// broker's loader or Recover removes them.
func Swap(dir string, newBases []int64, old []layout.Segment) ([]string, error) {
	newBases = slices.Clone(newBases)
	slices.Sort(newBases)
	for i := len(newBases) - 1; i >= 0; i-- {
		if err := renameExts(dir, newBases[i], layout.CleanedSuffix, layout.SwapSuffix); err != nil {
			return nil, err
		}
	}
	var deleted []string
	for _, s := range old {
		for _, p := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if p == "" {
				continue
			}
			if err := safefile.Rename(p, p+layout.DeletedSuffix); err != nil {
				return nil, err
			}
			deleted = append(deleted, p+layout.DeletedSuffix)
		}
	}
	for _, b := range newBases {
		if err := renameExts(dir, b, layout.SwapSuffix, ""); err != nil {
			return nil, err
		}
	}
	return deleted, nil
}

// removeAll removes ".deleted" files. One already gone is no error: a
// Sweeper and Recover, after a failed swap, may both be removing it.
func removeAll(paths []string) error {
	for _, p := range paths {
		if err := safefile.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Sweeper removes ".deleted" files on a goroutine of its own, as a broker
// deletes replaced segments later on a scheduler thread. Unlinking a
// segment frees its page cache, about a quarter of a second per cached
// gigabyte, which then overlaps the caller's next piece of work.
type Sweeper struct {
	paths chan []string
	done  chan struct{}
	err   error
}

// NewSweeper starts a sweeper; Wait must be called.
func NewSweeper() *Sweeper {
	s := &Sweeper{paths: make(chan []string, 16), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ps := range s.paths {
			if s.err == nil {
				s.err = removeAll(ps)
			}
		}
	}()
	return s
}

// Add queues files for removal.
func (s *Sweeper) Add(paths []string) { s.paths <- paths }

// Wait removes what is queued and returns the first error. The sweeper
// cannot be used after.
func (s *Sweeper) Wait() error {
	close(s.paths)
	<-s.done
	return s.err
}

func renameExts(dir string, base int64, from, to string) error {
	for _, ext := range Exts {
		name := filepath.Join(dir, layout.SegmentName(base, ext))
		err := safefile.Rename(name+from, name+to)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Abort removes the ".cleaned" files of an unfinished rewrite that never
// reached Replace.
func Abort(dir string, newBases []int64) {
	for _, b := range newBases {
		for _, ext := range Exts {
			os.Remove(CleanedPath(dir, b, ext))
		}
	}
}

// Recover finishes or rolls back an interrupted Replace, following
// LogLoader.removeTempFilesAndCollectSwapFiles and the swap completion that
// follows it. It returns one line per action taken, empty when the
// directory was already consistent.
func Recover(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var actions []string
	minCleaned := int64(1<<63 - 1)
	var swaps []layout.FileName
	var swapNames []string
	for _, e := range entries {
		name := e.Name()
		fn := layout.ParseFileName(name)
		switch fn.Leftover {
		case layout.DeletedSuffix:
			if err := removeAll([]string{filepath.Join(dir, name)}); err != nil {
				return actions, err
			}
			actions = append(actions, "removed "+name)
		case layout.CleanedSuffix:
			if err := safefile.Remove(filepath.Join(dir, name)); err != nil {
				return actions, err
			}
			actions = append(actions, "removed unfinished "+name)
			if isSegmentKind(fn.Kind) {
				minCleaned = min(minCleaned, fn.Base)
			}
		case layout.SwapSuffix:
			if isSegmentKind(fn.Kind) {
				swaps, swapNames = append(swaps, fn), append(swapNames, name)
			}
		}
	}
	// Swaps at or above a remaining .cleaned offset belong to a replacement
	// that had not finished renaming: roll it back.
	var keep []int
	for i, fn := range swaps {
		if fn.Base >= minCleaned {
			if err := safefile.Remove(filepath.Join(dir, swapNames[i])); err != nil {
				return actions, err
			}
			actions = append(actions, "removed incomplete "+swapNames[i])
			continue
		}
		keep = append(keep, i)
	}
	// The rest are complete: they replace every old file in their range.
	for _, i := range keep {
		fn := swaps[i]
		if fn.Kind != layout.Log {
			continue
		}
		// LogLoader.load opens the swap segment, its index ".swap" too, for
		// its readNextOffset.
		swap := logseg.Segment{Segment: layout.Segment{Base: fn.Base, Log: filepath.Join(dir, swapNames[i]),
			Index: filepath.Join(dir, layout.SegmentName(fn.Base, layout.IndexExt)+layout.SwapSuffix)}}
		next, err := swap.NextOffset()
		if err != nil {
			return actions, err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return actions, err
		}
		for _, e := range entries {
			old := layout.ParseFileName(e.Name())
			if old.Leftover == "" && isSegmentKind(old.Kind) && old.Base >= fn.Base && old.Base < next {
				if err := safefile.Remove(filepath.Join(dir, e.Name())); err != nil {
					return actions, err
				}
				actions = append(actions, "removed replaced "+e.Name())
			}
		}
	}
	for _, i := range keep {
		final := strings.TrimSuffix(swapNames[i], layout.SwapSuffix)
		if err := safefile.Rename(filepath.Join(dir, swapNames[i]), filepath.Join(dir, final)); err != nil {
			return actions, err
		}
		actions = append(actions, "completed "+final)
	}
	return actions, nil
}

func isSegmentKind(k layout.FileKind) bool {
	return k == layout.Log || k == layout.Index || k == layout.TimeIndex || k == layout.TxnIndex
}
