# Clinsight — build, run and test. `make run` and `make test` work on a fresh
# Debian machine: they install what they need (apt packages, staticcheck).

GO          ?= go
BIN         ?= ./clinsight
# The desktop app; $(BIN) is the command-line build (no Fyne, quick to start),
# which hands over to the desktop app beside it when run without a subcommand.
GUI_BIN     ?= ./clinsight-gui
DEMO_WS     ?= $(CURDIR)/demo-workspace
GOBIN       := $(shell $(GO) env GOPATH 2>/dev/null)/bin
STATICCHECK := $(GOBIN)/staticcheck
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages: cgo + OpenGL/X11 headers for Fyne's desktop driver.
BUILD_PKGS  := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
               libxinerama-dev libxi-dev libxxf86vm-dev


# make ollama: where the model server listens and keeps its models.
OLLAMA_PORT ?= 11434
OLLAMA_MODELS_DIR ?= $(DEMO_WS)/models

.PHONY: run build ollama test screenshot integration deps-build deps-test check-go vet staticcheck unit cgo-build fmt-check bench clean

## run: install build packages if missing, build, create the demo workspace on first run, open the app
run: build
	$(BIN) --workspace "$(DEMO_WS)" demo init --if-missing
	$(BIN) --workspace "$(DEMO_WS)"

## build: the desktop app with cgo (needs the OpenGL/X11 headers) as $(GUI_BIN), and the
## command-line build without Fyne as $(BIN), which opens $(GUI_BIN) when run without a subcommand
build: deps-build
	@[ -x $(GUI_BIN) ] || echo "compiling Clinsight: about 9 minutes the first time on 2 cores (Fyne and SQLite are large); later builds take seconds"
	CGO_ENABLED=1 $(GO) build -o $(GUI_BIN) .
	CGO_ENABLED=0 $(GO) build -tags nogui -o $(BIN) .

## ollama: build Ollama 0.17.4 from the Go module proxy if needed (10-15 minutes the first time), then run it
## on 127.0.0.1:$(OLLAMA_PORT) with its models in $(OLLAMA_MODELS_DIR) (Ctrl-C stops it); see README "Getting a model"
ollama: check-go
	@bash scripts/ollama-server.sh path >/dev/null 2>&1 || echo "building Ollama from the Go module proxy: 10-15 minutes the first time"
	@bash scripts/ollama-server.sh build >/dev/null
	@echo "Ollama on http://127.0.0.1:$(OLLAMA_PORT), models in $(OLLAMA_MODELS_DIR)"
	bash scripts/ollama-server.sh start $(OLLAMA_PORT) "$(OLLAMA_MODELS_DIR)"

## test: install what the tests need, then gofmt, go vet, staticcheck, the whole suite headless,
## the real-Ollama integration tests, and a real cgo build
test: deps-build deps-test fmt-check vet staticcheck unit integration cgo-build

check-go:
	@command -v $(GO) >/dev/null 2>&1 || { \
	  echo "Go is not installed: installing Debian's golang-go (go fetches the toolchain go.mod names through the module proxy)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq golang-go; }

deps-build: check-go
	@dpkg -s $(BUILD_PKGS) >/dev/null 2>&1 || { \
	  echo "installing build packages: $(BUILD_PKGS)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(BUILD_PKGS); }

# Debian packages the tests need: PostgreSQL 15 (the tests start their own throw-away
# cluster with initdb + pg_ctl in a temp directory, Unix socket only; no system service).
TEST_PKGS   := postgresql

deps-test: check-go
	@dpkg -s $(TEST_PKGS) >/dev/null 2>&1 || { \
	  echo "installing test packages: $(TEST_PKGS)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(TEST_PKGS); }
	@[ -x "$(STATICCHECK)" ] || { echo "installing staticcheck v0.8.2"; $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2; }

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	CGO_ENABLED=0 $(GO) vet -tags ci,integration ./...
	CGO_ENABLED=0 $(GO) vet -tags ci,nogui .

staticcheck:
	CGO_ENABLED=0 $(STATICCHECK) -tags ci,integration ./...

## unit: the whole suite, headless (Fyne's test driver), no GL needed; the ui and app
## packages under the race detector (it needs cgo and gcc, not the GL headers: the ci tag
## leaves Fyne's GL driver out)
RACE_PKGS := ./ui/ ./app/
# The screenshot tests draw every screen at two sizes with Fyne's software painter and
# check the layout: they run without the race detector, under which the painter is so slow
# that a busy machine timed them out (806 s for one in a CI run at load 25); the screens'
# concurrency is covered by the other ui tests, which run under it.
SHOT_TESTS := TestScreensAtBothSizes|TestScreenshot
# SQLite is modernc.org's translation of its C to Go: under the race detector (which
# also turns on checkptr) its virtual machine ran about 1.4 times slower than the rest
# of a test (TestCohortPrescreenMatrix: 20.7 s of processor time with it instrumented,
# 14.8 s without). It is left uninstrumented: the detector watches Clinsight's code,
# Fyne and database/sql, where our goroutines share memory; SQLite serialises its
# own connections.
RACE_FLAGS := -race -gcflags='modernc.org/...=-race=false'
# Tests talk only to the servers they start: a developer's OLLAMA_HOST (which wins over a
# workspace's saved host) must not send them elsewhere.
TESTENV   := env -u OLLAMA_HOST
unit:
	$(TESTENV) CGO_ENABLED=0 $(GO) test -tags ci -timeout 25m $$($(GO) list ./... | grep -v -x -F "$$($(GO) list $(RACE_PKGS))")
	$(TESTENV) CGO_ENABLED=0 $(GO) test -tags ci -timeout 20m -run '$(SHOT_TESTS)' ./ui/
	$(TESTENV) CGO_ENABLED=1 $(GO) test $(RACE_FLAGS) -tags ci -timeout 30m -skip '$(SHOT_TESTS)' $(RACE_PKGS)
	$(TESTENV) CGO_ENABLED=0 $(GO) test -tags ci,nogui .

## integration: builds the Ollama server from the Go module proxy into ~/.cache/clinsight
## (about 15 minutes the first time, reused afterwards), then runs the real-server tests
integration:
	bash scripts/ollama-server.sh build >/dev/null
	$(TESTENV) CGO_ENABLED=0 $(GO) test -tags ci,integration -run Integration ./localllm/ ./app/ ./app/impression/ ./app/cohort/ ./app/cli/ ./app/trials/

cgo-build:
	CGO_ENABLED=1 $(GO) build -o /dev/null .
	CGO_ENABLED=0 $(GO) build -tags nogui -o /dev/null .

## screenshot: every screen (and dialog) of the app on the demo data at 1024x640 and 1920x1080, drawn
## with the app's theme by Fyne's software painter (no display, no cgo), as NAME-WxH.png in
## docs/screenshots/; the same test checks each fits and reads (nothing cut off or ellipsized)
screenshot:
	CLINSIGHT_SCREENSHOT_DIR=$(CURDIR)/docs/screenshots CGO_ENABLED=0 $(GO) test -tags ci -count=1 -run 'TestScreensAtBothSizes|TestScreenshot|TestCohortPrescreenMatrix' ./ui/

## bench: the Go benchmarks with their figures (long: generates multi-million-row files)
bench:
	CGO_ENABLED=0 $(GO) test -tags ci -run '^$$' -bench . -benchtime 1x ./datasets/ ./export/ ./datasets/demo/ ./app/evidence/

clean:
	rm -f $(BIN) $(GUI_BIN)
