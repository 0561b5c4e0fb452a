package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/feedgen/feedgen/internal/listing"
)

// ScanFiles reads a manifest from r as a stream, calling fn with each
// file it lists, in order, and returns its format version: memory stays
// the same however many files it lists, where Parse holds them all. Each
// file is checked as Validate checks it (a clean path under articles/, a
// size, a SHA-256); the rest of the manifest is skipped unread. An error
// of fn stops the scan and is returned as it is.
func ScanFiles(r io.Reader, fn func(File) error) (format int, err error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return 0, scanErr(err)
	}
	sawFiles := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, scanErr(err)
		}
		key, _ := tok.(string)
		if (strings.EqualFold(key, "format") && key != "format") || (strings.EqualFold(key, "files") && key != "files") ||
			(key == "files" && sawFiles) || (key == "format" && format != 0) {
			return 0, fmt.Errorf("reading manifest: the key %q is ambiguous", key)
		}
		switch key {
		case "format":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return 0, scanErr(err)
			}
			v, err := n.Int64()
			if err != nil || v != Format {
				return 0, fmt.Errorf("manifest format %s is not supported (this feedgen reads format %d): rebuild the output", n, Format)
			}
			format = int(v)
		case "files":
			sawFiles = true
			if err := expectDelim(dec, '['); err != nil {
				return 0, scanErr(err)
			}
			for n := 0; dec.More(); n++ {
				var f File
				if err := dec.Decode(&f); err != nil {
					return 0, scanErr(err)
				}
				if msg := checkFile(f); msg != "" {
					return 0, fmt.Errorf("reading manifest: files[%d] %q: %s", n, f.Path, msg)
				}
				if err := fn(f); err != nil {
					return 0, err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return 0, scanErr(err)
			}
		default:
			if err := skipValue(dec); err != nil {
				return 0, scanErr(err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return 0, scanErr(err)
	}
	switch {
	case format == 0:
		return 0, errors.New("reading manifest: no format")
	case !sawFiles:
		return 0, errors.New("reading manifest: no files")
	}
	return format, nil
}

// checkFile says what is wrong with a file of a manifest, or "".
func checkFile(f File) string {
	if msg := CheckPath(f.Path); msg != "" {
		return msg
	}
	switch {
	case !strings.HasPrefix(f.Path, listing.Dir+"/"):
		return "not under " + listing.Dir + "/"
	case f.Size < 0:
		return "negative size"
	case !isSHA256(f.SHA256):
		return "no SHA-256"
	}
	return ""
}

func scanErr(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading manifest: %w", err)
}

// expectDelim reads the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("got %v, want %v", tok, d)
	}
	return nil
}

// skipValue reads one value, of any depth, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
