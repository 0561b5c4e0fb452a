package listing

// The headers of every answer from the listing's path.
const (
	Allow       = "GET, HEAD, OPTIONS"
	Vary        = "Accept"
	ContentType = "application/json"
)

// The bodies of the answers that are not pages: a request no page answers
// (404), OPTIONS (200), and a page that cannot be read (503, with
// Retry-After: RetryAfter seconds): a page file that does not match the
// manifest, a chunk that is missing.
const (
	NotFoundBody    = `{"detail":"Not found."}`
	UnavailableBody = `{"detail":"Service temporarily unavailable, try again later."}`
	RetryAfter      = "5"
	OptionsBody     = `{"name":"Article List","description":"","renders":["` + ContentType + `","text/html"],"parses":["` + ContentType + `","application/x-www-form-urlencoded","multipart/form-data"]}`
)

// AppendMethodNotAllowed appends the body of the 405 answer to a request
// with method: {"detail":"Method \"POST\" not allowed."}.
func AppendMethodNotAllowed(dst []byte, method string) []byte {
	dst = append(dst, `{"detail":`...)
	dst = AppendString(dst, `Method "`+method+`" not allowed.`)
	return append(dst, '}')
}
