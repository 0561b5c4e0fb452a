# feedgen: make run (build and serve the sample site), make test.
GO       ?= go
BIN      := bin/feedgen
ADDR     ?= 127.0.0.1:8080
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
# versitygw, the S3-compatible server the publish tests start (posix
# backend over a temporary folder): installed once, at a pinned version,
# into .cache (git-ignored); the tests find it through FEEDGEN_VERSITYGW.
VERSITYGW_VERSION := v1.8.0
VERSITYGW := $(CURDIR)/.cache/versitygw-$(VERSITYGW_VERSION)/versitygw
export FEEDGEN_VERSITYGW := $(VERSITYGW)
# fake-gcs-server, the Cloud Storage emulator the publish tests start for
# gs:// (Azurite, for azblob://, is an npm package of RUNTIME_NPM).
FAKE_GCS_VERSION := v1.56.1
FAKE_GCS := $(CURDIR)/.cache/fake-gcs-server-$(FAKE_GCS_VERSION)/fake-gcs-server
export FEEDGEN_FAKE_GCS_SERVER := $(FAKE_GCS)

.PHONY: run build test runtimes lint bench bench-serve bench-edge bench-watch bench-serve-bucket bench-bundle bench-chunks bench-publish bench-publish-vs bench-archive fuzz clean

# Build the sample site into public/, then serve it as a live preview that
# rebuilds on every change under content/ (Ctrl-C stops it).
run: build
	./$(BIN) build
	./$(BIN) serve --watch --addr $(ADDR)

# -buildvcs=auto: feedgen version names the commit, even where GOFLAGS
# says -buildvcs=false. go stamps none in a linked git worktree (whose .git
# is a file): BUILD_VCS passes it, as go would stamp it (its time in UTC;
# modified when git status lists anything), which feedgen version takes
# when there is no stamp.
BUILD_VCS = $(shell TZ=UTC git log -1 --format='%H %cd' --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)$(shell git status --porcelain 2>/dev/null | grep -q . && echo ' modified')
build:
	$(GO) build -buildvcs=auto -ldflags "-X 'main.buildVCS=$(BUILD_VCS)'" -o $(BIN) ./cmd/feedgen

# gotestsum runs go test -json and prints one line per package as it
# finishes, with its time, then the slowest tests (from .cache/test.json).
GOTESTSUM_VERSION := v1.13.0
GOTESTSUM := $(CURDIR)/.cache/gotestsum-$(GOTESTSUM_VERSION)/gotestsum

# make test runs the rules tests against the real platforms (nginx, Caddy,
# Apache, workerd, netlify-redirector) and the publish tests against real
# servers (versitygw, fake-gcs-server, Azurite): it installs them first when
# they are missing, and the tests fail rather than skip when one is not
# found.
#
# The tests build sites and fill buckets: they make and delete tens of
# thousands of small files. On the development machine's disk (ext4 with
# discard) a build of the sample takes 1.0 to 1.3 s of CPU, on a tmpfs
# 0.45 s. So their temporary folders (and go test's, which runs the test
# binaries from there) go to /dev/shm when it is a tmpfs with 4 GiB free
# that may run programs (Docker mounts it noexec), else to $TMPDIR (or
# /tmp); make test TEST_TMPDIR=DIR chooses. In it, a folder of this
# checkout's, emptied as a run starts and removed when the tests pass (the
# suite held 250 MB at most). The line that runs gotestsum is one command,
# which the shell replaces itself with: a signal to make reaches it. The name is short: some tests
# put a Unix socket there, whose path may not be longer than 100 bytes.
# The two longest packages start first, so that neither runs last alone.
# (Both are worked out once, when make test first needs them: the
# $(eval) idiom; other targets do not probe /dev/shm.)
ifndef TEST_TMPDIR
TEST_TMPDIR = $(eval TEST_TMPDIR := $(shell d=/dev/shm; \
	[ "$$(stat -f -c %T $$d 2>/dev/null)" = tmpfs ] && \
	[ "$$(df -Pk $$d 2>/dev/null | awk 'NR==2 {print $$4}')" -ge 4194304 ] 2>/dev/null && \
	f=$$(mktemp $$d/fg.XXXXXX 2>/dev/null) && \
	{ printf '\043!/bin/sh\n' > $$f; chmod 755 $$f; $$f 2>/dev/null; ok=$$?; rm -f $$f; [ $$ok = 0 ]; } && \
	echo $$d || echo "$${TMPDIR:-/tmp}"))$(TEST_TMPDIR)
endif
TEST_TMP    = $(eval TEST_TMP := $(TEST_TMPDIR)/fg-$(shell printf '%s' '$(CURDIR)' | cksum | cut -c1-6))$(TEST_TMP)
TEST_FIRST := ./internal/publish ./cmd/feedgen
test: runtimes $(VERSITYGW) $(FAKE_GCS) $(GOTESTSUM)
	@echo "go test -race ./...: a line per package as it finishes (about 5 minutes on 2 cores; the first run compiles for a few more); temporary files in $(TEST_TMP)"
	@rm -rf "$(TEST_TMP)" && mkdir -p "$(TEST_TMP)" && chmod 755 "$(TEST_TMP)"
	TMPDIR="$(TEST_TMP)" FEEDGEN_RUNTIMES=required PATH="$(NPM_DIR)/node_modules/.bin:$$PATH:/usr/sbin" \
		$(GOTESTSUM) --format pkgname-and-test-fails --format-hide-empty-pkg --jsonfile $(CURDIR)/.cache/test.json \
		--raw-command -- $(GO) test -json -race -timeout 15m $(TEST_FIRST) ./...
	@rm -rf "$(TEST_TMP)"
	@$(GOTESTSUM) tool slowest --jsonfile $(CURDIR)/.cache/test.json --threshold 10s | sed 's/^/slow: /'

# The platforms the rules tests run: Debian packages, installed with apt-get
# when missing (apt-get update only then; sudo when not root), and npm
# packages, installed into $(NPM_DIR) (git-ignored). When everything is
# there it does nothing. Installing never starts a service: the postinst
# scripts of nginx, apache2 and caddy start them through invoke-rc.d or
# deb-systemd-invoke, which both ask /usr/sbin/policy-rc.d first; when the
# machine has none, one that answers 101 (action forbidden) is put there
# for the install and removed after it, and the units of the servers it
# installed are disabled again (their postinst enables them for the next
# boot), so the machine runs the same services as before.
NPM_DIR      := $(CURDIR)/.cache/npm
RUNTIME_DEBS := nginx libnginx-mod-http-js caddy apache2 python3-django
RUNTIME_NPM  := workerd@1.20261117.1 netlify-redirector@0.5.0 azurite@3.37.0
# install_debs installs the Debian packages of $(1) that are missing (and
# nodejs and npm when $(2), a shell test, fails), as described above.
define install_debs
	@missing=; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	$(2); \
	if [ -n "$$missing" ]; then \
		command -v apt-get >/dev/null || { echo "runtimes: no apt-get here: install$$missing yourself"; exit 1; }; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		policy=; \
		if [ ! -e /usr/sbin/policy-rc.d ]; then \
			printf '#!/bin/sh\nexit 101\n' | $$sudo tee /usr/sbin/policy-rc.d >/dev/null && \
			$$sudo chmod 755 /usr/sbin/policy-rc.d && policy=1; \
		fi; \
		echo "installing$$missing"; \
		$$sudo apt-get update -qq && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			-o DPkg::Lock::Timeout=300 $$missing; \
		status=$$?; \
		[ -z "$$policy" ] || $$sudo rm -f /usr/sbin/policy-rc.d; \
		if [ -d /run/systemd/system ]; then \
			for p in $$missing; do case $$p in \
				nginx|caddy) $$sudo systemctl disable --quiet $$p.service || true;; \
				apache2) $$sudo systemctl disable --quiet apache2.service apache-htcacheclean.service || true;; \
			esac; done; \
		fi; \
		[ $$status = 0 ] || exit $$status; \
	fi
endef

runtimes:
	$(call install_debs,$(RUNTIME_DEBS),command -v npm >/dev/null || missing="$$missing nodejs npm")
	@for p in $(RUNTIME_NPM); do \
		[ -f $(NPM_DIR)/node_modules/$${p%@*}/package.json ] || { \
			echo "installing $(RUNTIME_NPM) into $(NPM_DIR)"; \
			npm install --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error $(RUNTIME_NPM) || exit 1; \
			break; }; \
	done

# versitygw and fake-gcs-server for the publish tests (see above).
$(VERSITYGW):
	@echo "installing versitygw $(VERSITYGW_VERSION) into .cache (go install: a minute or two, once)"
	GOBIN=$(dir $(VERSITYGW)) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

$(FAKE_GCS):
	@echo "installing fake-gcs-server $(FAKE_GCS_VERSION) into .cache (go install: a minute, once)"
	GOBIN=$(dir $(FAKE_GCS)) $(GO) install github.com/fsouza/fake-gcs-server@$(FAKE_GCS_VERSION)

$(GOTESTSUM):
	GOBIN=$(dir $(GOTESTSUM)) $(GO) install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)

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

# nginx-njs (feedgen rules nginx-njs) putting the pages of a chunks build
# together against plain nginx serving the pages build of the same site
# (10,000 articles): req/s on a hot page and a shuffled walk, and the
# bytes its njs reads per page (chunk ranges, and the index read whole).
bench-edge:
	$(GO) run ./tools/feedbench serve -server nginx-njs
	$(GO) run ./tools/feedbench serve -server nginx-njs -cache

# serve --watch: an edited title and a new article, from the save to the
# first answer that holds it; pages (1,000 and 10,000 articles), then
# chunks with every filter (20,000 and 100,000).
bench-watch:
	$(GO) run ./tools/feedbench watch
	$(GO) run ./tools/feedbench watch -layout chunks -sizes 20000,100000

# feedgen serve --dir s3://... (issue 40) on a chunks build of 100,000
# articles published to versitygw, against serve --dir on the same build:
# the first answer after its start, a hot page and a walk with wrk, its
# memory against --cache-size.
bench-serve-bucket: $(VERSITYGW)
	FEEDGEN_VERSITYGW=$(VERSITYGW) $(GO) run ./tools/feedbench serve -source bucket -layout chunks -articles 100000

bench-bundle:
	$(GO) run ./tools/feedbench bundle

# layout: chunks against pages on 20,000 articles with every filter: output size, cold builds, what one new or edited article makes publish upload.
bench-chunks:
	$(GO) run ./tools/feedbench chunks

# feedgen serve on a 2.4 GB output (10,000 articles, limits [20, 50, 100], every
# offset) against nginx, with its memory; cold builds of 100,000 and 1,000,000
# articles (aligned; medians of 6 and 3 cold builds, about 14 minutes in all):
# time against linear, peak RSS; then the serve benchmark again.
.PHONY: bench-scale
bench-scale:
	$(GO) run ./tools/feedbench scale

# feedgen publish to versitygw, a 10,000-article build (limits [20], every
# offset): the first publish, an unchanged one, one after an edit.
bench-publish: $(VERSITYGW)
	FEEDGEN_BENCH_PUBLISH=10000 $(GO) test -run '^TestPublishBench$$' -count=1 -v -timeout 30m ./internal/publish/

# The same site published with feedgen publish, aws s3 sync --delete and
# rclone sync --checksum (Debian's awscli and rclone, installed as the
# runtimes are when missing) to one versitygw, in one run: objects, bytes
# (counted by a proxy in front of the server) and time for a first,
# unchanged, one-edit and new-article publish.
bench-publish-vs: $(VERSITYGW)
	$(call install_debs,awscli rclone,true)
	$(GO) run ./tools/feedbench publish -versitygw $(VERSITYGW)

# One new article on an archive of 1,000,000 articles (layout: chunks, all
# four filters) against the same on 10,000, in one run (issue 38): cold
# build, then for each of 3 new articles the build after it, publish to
# versitygw and to a file:// bucket, an unchanged publish; nginx-njs on
# both builds; the issue's table with its goals. About 35 GB of disk and
# an hour; elsewhere or smaller:
# make bench-archive ARCHIVE_FLAGS='-dir /big -articles 100000'.
ARCHIVE_FLAGS ?=
bench-archive: $(VERSITYGW)
	$(call install_debs,nginx libnginx-mod-http-js wrk,true)
	$(GO) run ./tools/feedbench archive -versitygw $(VERSITYGW) $(ARCHIVE_FLAGS)

# Run each fuzz test for a while (make fuzz FUZZTIME=5m).
FUZZTIME ?= 30s
FUZZ := internal/content:FuzzParse internal/content:FuzzSplit internal/content:FuzzFirstParagraph internal/content:FuzzValidUTF8 internal/yamlnode:FuzzSimple \
	internal/listing:FuzzAppendString internal/listing:FuzzParseQuery internal/listing:FuzzParseQueryFilters internal/listing:FuzzEncodeValue internal/listing:FuzzValidUTF8 \
	internal/manifest:FuzzScanFiles internal/chunk:FuzzParseRoot internal/chunk:FuzzParseLeaf internal/chunk:FuzzScanLeaf internal/content:FuzzReadCache internal/listing:FuzzAppendLink internal/listing:FuzzParsePageKey \
	internal/server:FuzzServeQuery internal/server:FuzzServeChunks internal/server:FuzzParseHead internal/bundle:FuzzRead internal/bundle:FuzzFlip internal/importer:FuzzIsKey internal/syndication:FuzzXML internal/syndication:FuzzModified
fuzz:
	@for t in $(FUZZ); do \
		echo "fuzz $$t"; \
		$(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

clean:
	rm -rf bin public
