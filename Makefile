# logtool — make targets. `make test` is what CI runs.
GO       ?= go
PKGS     := ./...
SAMPLE   := testdata/kafka-logs
FUZZTIME ?= 5s
BIN      ?= bin/logtool

# The version `logtool --version` prints, from git: Go stamps the revision
# itself only outside a git worktree and without -buildvcs=false.
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
REVTIME  ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS  := -X github.com/logtool/logtool/commands.buildVersion=$(VERSION) \
            -X github.com/logtool/logtool/commands.buildRevision=$(REVISION) \
            -X github.com/logtool/logtool/commands.buildTime=$(REVTIME)

.PHONY: build test vet staticcheck golden bench fuzz demo testdata clean

# CGO_ENABLED=0: one static binary, as the README promises. franz-go's import
# of net would otherwise link libc for its resolver; the static binary also
# starts about 5 ms sooner (logtool --version 23 ms against 29).
# urfave_cli_no_docs leaves out urfave/cli's man and markdown generators,
# which logtool does not use, and the init of blackfriday they bring:
# 2-3 ms of every run (--version 26 ms against 29).
build:
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs -ldflags "$(LDFLAGS)" -o $(BIN) .

vet:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# staticcheck, pinned; `go run` fetches it through the module proxy on first use.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(STATICCHECK) $(PKGS)

# Unit, round-trip, real-broker-sample and golden tests, with the race detector.
# go test shows nothing of a passing package, so the skip of the tests
# that read the real broker samples is said here, where every run shows it.
SAMPLES  ?= $(or $(LOGTOOL_SAMPLES),../shared/kafka-samples)
test: vet staticcheck
	@test -d "$(SAMPLES)" || echo "NOTE: no Kafka broker samples at $(SAMPLES): the tests that read them are skipped (set LOGTOOL_SAMPLES to their directory)"
	LOGTOOL_SAMPLES="$(abspath $(SAMPLES))" $(GO) test -race -count=1 -timeout 30m $(PKGS)
	# The allocation tests, which skip under -race (sync.Pool drops there).
	$(GO) test -count=1 -run '^(TestMemoryFlat|TestLargeRecordBufferReused)$$' ./dump/ ./compact/
	@test -d "$(SAMPLES)" || echo "NOTE: no Kafka broker samples at $(SAMPLES): the tests that read them were skipped"
	@command -v kcat >/dev/null || echo "NOTE: kcat is not installed: TestKcatPipeline was skipped, export --format kcat was not compared with kcat (apt-get install kcat)"

# Regenerate golden files after an intended output change; review the diff.
golden:
	$(GO) test ./commands/ -run Golden -update

# Go benchmarks (b.SetBytes: MB/s) and the side-by-side comparison with cat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
	./scripts/bench.sh

# Every fuzz target for FUZZTIME each (longer runs: FUZZTIME=10m make fuzz).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# A short tour on the shipped sample.
demo: build
	./bin/logtool dump $(SAMPLE)
	./bin/logtool dump --deep-iteration --print-data-log $(SAMPLE)/payments.txn-0/00000000000000000000.log | head -20

# Regenerate the committed sample log directory (see testdata/README.md).
testdata:
	./scripts/make-sample.sh $(SAMPLE)

clean:
	rm -rf bin
