# feedgen: make run (build and serve the sample site), make test.
GO       ?= go
BIN      := bin/feedgen
ADDR     ?= 127.0.0.1:8080
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: run build test lint bench bench-serve bench-watch bench-bundle fuzz clean

# Build the sample site into public/, then serve it as a live preview that
# rebuilds on every change under content/ (Ctrl-C stops it).
run: build
	./$(BIN) build
	./$(BIN) serve --watch --addr $(ADDR)

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
	$(GO) run ./tools/feedbench build

bench-serve:
	$(GO) run ./tools/feedbench serve

bench-watch:
	$(GO) run ./tools/feedbench watch

bench-bundle:
	$(GO) run ./tools/feedbench bundle

# Run each fuzz test for a while (make fuzz FUZZTIME=5m).
FUZZTIME ?= 30s
FUZZ := internal/content:FuzzParse internal/content:FuzzSplit internal/content:FuzzFirstParagraph internal/content:FuzzValidUTF8 internal/yamlnode:FuzzSimple \
	internal/listing:FuzzAppendString internal/listing:FuzzParseQuery internal/listing:FuzzParseQueryFilters internal/listing:FuzzEncodeValue \
	internal/server:FuzzServeQuery internal/server:FuzzParseHead internal/bundle:FuzzRead
fuzz:
	@for t in $(FUZZ); do \
		echo "fuzz $$t"; \
		$(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

clean:
	rm -rf bin public
