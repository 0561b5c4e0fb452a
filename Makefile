# feedgen: make run (build and serve the sample site), make test.
GO       ?= go
BIN      := bin/feedgen
ADDR     ?= 127.0.0.1:8080
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: run build test lint bench bench-serve bench-watch fuzz clean

run: build
	./$(BIN) build
	./$(BIN) serve --addr $(ADDR)

build:
	$(GO) build -o $(BIN) ./cmd/feedgen

test:
	$(GO) test -race ./...

lint: $(STATICCHECK)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Go benchmarks, then whole-process builds on a generated corpus.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	$(GO) run ./cmd/feedbench build

bench-serve:
	$(GO) run ./cmd/feedbench serve

bench-watch:
	$(GO) run ./cmd/feedbench watch

# Run each fuzz test for a while (make fuzz FUZZTIME=5m).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./internal/content -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./internal/feed -run '^$$' -fuzz FuzzAppendString -fuzztime $(FUZZTIME)
	$(GO) test ./internal/feed -run '^$$' -fuzz FuzzParseQuery -fuzztime $(FUZZTIME)

clean:
	rm -rf bin public
