package rules

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The modules folders of Debian's packages, where --standalone's configs
// load modules from unless --modules names another.
const (
	nginxModules  = "/usr/lib/nginx/modules"
	apacheModules = "/usr/lib/apache2/modules"
)

// ModulesDir returns the folder the standalone config of target t loads
// its modules from: s.Modules, or the target's (Debian's); "" for a
// target that loads none.
func (s *Site) ModulesDir(t Target) string {
	switch {
	case !t.Standalone || t.ModulesDir == "":
		return ""
	case s.Modules != "":
		return s.Modules
	}
	return t.ModulesDir
}

// StandaloneModules returns the module files the standalone config of
// target t loads, by absolute path: the files a machine must have to run
// it.
func StandaloneModules(t Target, s *Site) []string {
	dir := s.ModulesDir(t)
	if dir == "" {
		return nil
	}
	files := make([]string, len(t.Modules))
	for i, f := range t.Modules {
		files[i] = filepath.Join(dir, f)
	}
	return files
}

// apacheModuleFiles are the module files every standalone apache.conf
// loads.
func apacheModuleFiles() []string {
	var files []string
	for _, m := range apacheLoads {
		if m.always {
			files = append(files, m.file)
		}
	}
	return files
}

// nginxPath is the path by which s's nginx.conf names the folder p: in
// a standalone config, run with OUTDIR as nginx's prefix (nginx -p
// OUTDIR), relative to OUTDIR, as nginx joins a relative path to its
// prefix, so that the folder names no folder of this machine; but only
// when the kernel, which resolves each .. from the folder it is in (a
// link's .. is that of the folder it points to), then reaches p, and
// otherwise absolute. In a file the system's nginx includes, whose
// prefix is its own, absolute.
func nginxPath(s *Site, p string) string {
	if !s.Standalone {
		return p
	}
	rel, err := filepath.Rel(s.OutDir, p)
	if err != nil || resolved(filepath.Join(resolved(s.OutDir), rel)) != resolved(p) {
		return p
	}
	return filepath.ToSlash(rel)
}

// resolved is the absolute path p with the links of its folders that
// exist resolved: the folders that do not exist yet (an OUTDIR that
// Write will make) are no links.
func resolved(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// nginxStandalone wraps conf, what nginx's http {} includes, in a complete
// main config whose every file (pid, logs, temporary files) is in
// s.OutDir, for nginx -p OUTDIR -c nginx.conf, named relative to that
// prefix, as any user for a port
// above 1024. It sets neither daemon nor master_process, which -g can
// then set (nginx refuses a directive given twice).
func nginxStandalone(s *Site, conf []byte, module string) ([]byte, error) {
	if err := unholdable("nginx.conf", outLabel, s.OutDir, nginxUnquotable); err != nil {
		return nil, err
	}
	if module != "" {
		if err := unholdable("nginx.conf", modulesLabel, filepath.Dir(module), nginxUnquotable); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.WriteString(`# A complete nginx config, written by feedgen rules --standalone: it needs
# no system config, and nginx keeps its pid, logs and temporary files in
# DIR, this file's folder (its paths are relative to it), so any user can
# run it on a port above 1024:
#
`)
	standaloneCommands(&b, nginxCommands("DIR", true))
	b.WriteString(`#
# In the foreground: -g 'daemon off;'. Started by root, its workers run as
# nobody, who must be able to read the build (or add user NAME;).
`)
	if module != "" {
		fmt.Fprintf(&b, "load_module %s;\n", nginxQuote(module))
	}
	fmt.Fprintf(&b, `pid %s;
error_log %s;
worker_processes auto;

events {
    worker_connections 1024;
}

http {
    access_log %s;
    sendfile on;
`, nginxQuote("nginx.pid"), nginxQuote("error.log"), nginxQuote("access.log"))
	for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "    %s_temp_path %s;\n", k, nginxQuote(k+"_temp"))
	}
	b.WriteString("\n")
	b.Write(conf)
	b.WriteString("}\n")
	return []byte(b.String()), nil
}

// standaloneCommands writes c, the commands of a standalone config, as
// the lines of its first comment that say how to start, reload and stop
// it.
func standaloneCommands(b *strings.Builder, c Commands) {
	fmt.Fprintf(b, "#   start:  %s\n#   reload: %s\n#   stop:   %s\n", c.Start, c.Reload, c.Stop)
}

// apacheLoad is a module the standalone apache.conf loads.
type apacheLoad struct {
	name, file string
	// always: the module is always loaded; otherwise only when the
	// server has not got it built in (Debian builds in unixd and
	// log_config, other systems load them).
	always bool
}

var apacheLoads = []apacheLoad{
	{"mpm_event_module", "mod_mpm_event.so", true},
	{"authz_core_module", "mod_authz_core.so", true},
	{"rewrite_module", "mod_rewrite.so", true},
	{"headers_module", "mod_headers.so", true},
	{"setenvif_module", "mod_setenvif.so", true},
	{"unixd_module", "mod_unixd.so", false},
	{"log_config_module", "mod_log_config.so", false},
}

// apacheStandalone puts before conf, the listing's Listen and VirtualHost,
// a complete main config whose every file (pid, logs, mutexes) is in
// s.OutDir, with the modules conf needs loaded from s.ModulesDir, for
// apache2 -d OUTDIR -f apache.conf -k start, as any user for a port above
// 1024.
func apacheStandalone(s *Site, conf []byte) ([]byte, error) {
	dir := s.OutDir
	modules := s.ModulesDir(apacheTarget())
	if err := unholdable("apache.conf", outLabel, dir, apacheUnquotable); err != nil {
		return nil, err
	}
	if err := unholdable("apache.conf", modulesLabel, modules, apacheUnquotable); err != nil {
		return nil, err
	}
	host := s.Host()
	if host == "" || host == "0.0.0.0" || host == "[::]" {
		host = "localhost"
	}
	var commands, b strings.Builder
	standaloneCommands(&commands, apacheCommands(dir, true))
	fmt.Fprintf(&b, `# A complete Apache httpd config, written by feedgen rules --standalone:
# it needs no system config, and Apache keeps its pid, logs and mutexes in
# %[1]s, so any user can run it on a port above 1024 (Debian's
# apache2; httpd elsewhere, with --modules naming its modules folder):
#
%[7]s#
# In the foreground: -DFOREGROUND instead of -k start. Started by root,
# Apache runs its workers as User and Group (nobody), who must be able to
# read the build; started by any other user, it ignores them.

ServerRoot %[2]s
PidFile %[3]s
ErrorLog %[4]s
DefaultRuntimeDir %[2]s
Mutex %[5]s default
ServerName %[6]s
`, dir, apacheQuote(dir), apacheQuote(filepath.Join(dir, "httpd.pid")), apacheQuote(filepath.Join(dir, "error.log")), apacheQuote("file:"+dir), host, commands.String())
	for _, m := range apacheLoads {
		load := fmt.Sprintf("LoadModule %s %s\n", m.name, apacheQuote(filepath.Join(modules, m.file)))
		if !m.always {
			load = fmt.Sprintf("<IfModule !%s>\n    %s</IfModule>\n", m.name, load)
		}
		b.WriteString(load)
	}
	// After mod_unixd, whose directives they are.
	b.WriteString("User nobody\nGroup #65534\n")
	fmt.Fprintf(&b, `LogFormat "%%h %%l %%u %%t \"%%r\" %%>s %%O \"%%{Referer}i\" \"%%{User-Agent}i\"" combined
CustomLog %s combined

`, apacheQuote(filepath.Join(dir, "access.log")))
	b.Write(conf)
	return []byte(b.String()), nil
}
