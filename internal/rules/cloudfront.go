package rules

import (
	"fmt"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
)

// cloudfrontTarget is a CloudFront Function on the viewer requests of a
// distribution whose origin is the bucket the build is published to: it
// rewrites a request for a page to the page's key, and answers the rest
// itself.
func cloudfrontTarget() Target {
	return Target{
		Name:     "cloudfront",
		Files:    []string{"cloudfront.js"},
		Run:      "a CloudFront Function (cloudfront-js-2.0) on the viewer requests of the distribution in front of the bucket",
		Counts:   true,
		Layouts:  []string{layout.PagesName},
		Generate: cloudfrontGenerate,
	}
}

// cloudfrontMaxSize is the largest CloudFront Function: 10 KB.
const cloudfrontMaxSize = 10 * 1024

func cloudfrontGenerate(s *Site) (*Output, error) {
	// Short: every byte counts against CloudFront's 10 KB.
	header := "// feedgen rules cloudfront: holds the build's counts.\n"
	js, err := cloudfrontScript(s, true)
	if err != nil {
		return nil, err
	}
	var warnings []string
	if len(header)+len(js) > cloudfrontMaxSize {
		dropped := fmt.Sprintf("the filters are left out: with the counts of its %d collections the function would be %d bytes, over CloudFront's %d; a filtered request answers 404",
			len(s.Collections), len(header)+len(js), cloudfrontMaxSize)
		header += "// The " + strings.TrimPrefix(dropped, "the ") + ".\n"
		warnings = append(warnings, "cloudfront.js: "+dropped)
		if js, err = cloudfrontScript(s, false); err != nil {
			return nil, err
		}
	}
	js = append([]byte(header), js...)
	if len(js) > cloudfrontMaxSize {
		return nil, fmt.Errorf("cloudfront: the function is %d bytes, over CloudFront's %d", len(js), cloudfrontMaxSize)
	}
	return &Output{Files: map[string][]byte{"cloudfront.js": js}, Warnings: warnings}, nil
}

// cloudfrontScript returns the code of cloudfront.js, compacted, with the
// filtered collections or only the main listing's count.
func cloudfrontScript(s *Site, filters bool) ([]byte, error) {
	d, err := newSiteData(s, filters)
	if err != nil {
		return nil, err
	}
	// The function reads no file: the origin sends a feed, with the
	// Content-Type publish gave it, and answers what it cannot read.
	for p := range d.Feeds {
		d.Feeds[p] = 1
	}
	d.Unavailable, d.RetryAfter = "", ""
	js, err := script("", d, cloudfrontAdapterJS)
	if err != nil {
		return nil, err
	}
	return minify(compact(js)), nil
}
