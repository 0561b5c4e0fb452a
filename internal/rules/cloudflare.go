package rules

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
)

// cloudflareTarget is a Cloudflare Worker in front of the build uploaded
// as the Worker's static assets: the Worker runs first for every request
// and reads pages through the assets binding. workerd, Cloudflare's
// runtime, runs the same Worker locally with the build's folder as the
// binding.
func cloudflareTarget() Target {
	return Target{
		Name:     "cloudflare",
		Files:    []string{"worker.js", "wrangler.toml", "workerd.capnp"},
		Run:      "cd OUTDIR && npx wrangler deploy; locally: npx workerd serve OUTDIR/workerd.capnp",
		Counts:   true,
		Layouts:  []string{layout.PagesName, layout.ChunksName},
		Generate: cloudflareGenerate,
		Commands: func(dir string, _ bool) Commands {
			return Commands{Then: "deploy the Worker", Reload: "cd " + ShellQuote(dir) + " && npx wrangler deploy"}
		},
	}
}

// compatibilityDate is the Workers compatibility date of worker.js.
const compatibilityDate = "2024-09-23"

// workerAdapter is worker.js's module: every request goes to respond, which
// reads pages through the assets binding.
// A build of layout: chunks is read through the assets binding too, or
// from the R2 bucket bound as BUILD when there is one.
const workerAdapter = `
export default {
    async fetch(request, env) {
        var assets = function (r) {
            return env.ASSETS.fetch(r);
        };
        return respond(request, assets, env.BUILD != null ? bucketStore(env.BUILD) : fetchStore(request.url, assets));
    }
};
`

func cloudflareGenerate(s *Site) (*Output, error) {
	d, err := newSiteData(s, true)
	if err != nil {
		return nil, err
	}
	header := "// feedgen rules cloudflare: a module Worker that answers the listing as feedgen serve does,\n" +
		"// its pages read from the static assets bound as ASSETS. It holds the build's counts:\n" +
		"// write it again after each build.\n"
	r2 := ""
	if d.Chunked == 1 {
		header = "// feedgen rules cloudflare: a module Worker that answers the listing as feedgen serve does,\n" +
			"// putting its pages together from each collection's index and chunks, read from the static\n" +
			"// assets bound as ASSETS (or the R2 bucket bound as BUILD). A build does not make it stale:\n" +
			"// write it again when config.yaml's base_url, pagination, filters or feeds change.\n"
		r2 = `
# Or read the build from an R2 bucket that feedgen publish keeps
# (s3://BUCKET?endpoint=https://ACCOUNT.r2.cloudflarestorage.com&region=auto):
# bind it as BUILD, and the Worker reads indexes and chunks from it.
# [[r2_buckets]]
# binding = "BUILD"
# bucket_name = "BUCKET"
`
	}
	js, err := script(header, d, fetchAdapterJS+workerAdapter)
	if err != nil {
		return nil, err
	}
	// Wrangler reads a relative path from the folder of wrangler.toml:
	// the pair moves together, and the file names no folder of this
	// machine.
	assets := relativeTo(s.OutDir, s.Root)
	toml := fmt.Sprintf(`# feedgen rules cloudflare: npx wrangler deploy, in this folder. The build
# in %[1]s (from this folder) is uploaded as the Worker's static assets;
# the Worker runs first for every request (it never serves a file by its
# path).
name = "feedgen"
main = "worker.js"
compatibility_date = "%[2]s"

[assets]
directory = %[3]s
binding = "ASSETS"
run_worker_first = true
%[4]s`, assets, compatibilityDate, strconv.Quote(assets), r2)
	capnp := fmt.Sprintf(`# feedgen rules cloudflare: runs worker.js locally on workerd, Cloudflare's
# runtime: npx workerd serve workerd.capnp, in this folder. It listens on
# %[1]s.
# The build in %[2]s is the ASSETS binding (a disk service: worker.js
# never asks it for a file by the request's path). workerd reads a
# relative path from the folder it is started in, so this one is absolute:
# -d assets=DIR serves the build in DIR instead.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "feedgen", worker = .worker),
    (name = "assets", disk = (path = %[3]s, writable = false)),
  ],
  sockets = [
    (name = "http", address = %[4]s, http = (), service = "feedgen"),
  ],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
  ],
  compatibilityDate = "%[5]s",
  bindings = [
    (name = "ASSETS", service = "assets"),
  ],
);
`, workerdAddress(s.Listen), s.Root, strconv.Quote(s.Root), strconv.Quote(workerdAddress(s.Listen)), compatibilityDate)
	return &Output{Files: map[string][]byte{"worker.js": js, "wrangler.toml": []byte(toml), "workerd.capnp": []byte(capnp)}}, nil
}

// workerdAddress is listen as workerd's socket address: a port alone is
// on 127.0.0.1, where feedgen serve listens by default (workerd.capnp
// runs the Worker locally); an empty host (:8080) is every interface, as
// for feedgen serve --addr.
func workerdAddress(listen string) string {
	switch i := strings.LastIndexByte(listen, ':'); i {
	case -1:
		return net.JoinHostPort("127.0.0.1", listen)
	case 0:
		return net.JoinHostPort("*", listen[1:])
	}
	return listen
}

// relativeTo returns the path p relative to the folder dir, both
// absolute, for a file in dir to name p: "../public". Where there is no
// such path (another volume), p as it is.
func relativeTo(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}
