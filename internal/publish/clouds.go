package publish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

// gs:// and azblob:// buckets are opened as gocloud.dev's URL openers
// open them (the same parameters and environment), but with an HTTP
// client of publish's own that reports each request to the attempt's
// watch (see watch), as s3:// does: an upload's body is progress as it
// is sent, not as the SDK copies it into a buffer. The environment is
// read at each Open, and nothing is printed (gocloud.dev's opener of
// gs:// prints a warning on stdout when it finds no credentials: publish
// says it as an error instead).

// openGCS opens a gs:// bucket: credentials from the environment
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth application-default
// login, the metadata server), none for an emulator (STORAGE_EMULATOR_HOST).
func (b *Bucket) openGCS(ctx context.Context, u *url.URL, workers int) (*blob.Bucket, error) {
	var (
		creds *google.Credentials
		err   error
	)
	emulator := os.Getenv("STORAGE_EMULATOR_HOST") != ""
	if emulator || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" {
		creds, err = google.CredentialsFromJSONWithType(ctx, []byte(`{"type": "service_account", "project_id": "my-project-id"}`), google.ServiceAccount)
	} else if ud := u.Query().Get("universe_domain"); ud != "" {
		creds, err = gcp.DefaultCredentialsWithParams(ctx, google.CredentialsParams{UniverseDomain: ud})
	} else {
		creds, err = gcp.DefaultCredentials(ctx)
	}
	if err != nil {
		return nil, &BucketError{Kind: NoCredentials, Op: "finding credentials", Err: err}
	}
	transport := watchedTransport{newTransport(workers)}
	client, err := gcp.NewHTTPClient(transport, creds.TokenSource)
	if err != nil {
		return nil, &BucketError{Kind: NoCredentials, Op: "finding credentials", Err: err}
	}
	opener := &gcsblob.URLOpener{Client: client, TokenSource: gcp.CredentialsTokenSource(creds)}
	if emulator {
		// gocloud.dev sends an emulator's requests through
		// http.DefaultClient, unless a client option names another:
		// publish's, without credentials.
		opener.Options.ClientOptions = []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: transport})}
	}
	return opener.OpenBucketURL(ctx, u)
}

// openAzure opens an azblob:// container: the service from
// AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_DOMAIN, AZURE_STORAGE_PROTOCOL,
// AZURE_STORAGE_IS_LOCAL_EMULATOR (or the URL's storage_account=,
// domain=, protocol=, localemu=, cdn=); credentials from
// AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN (whose service the URL may
// not change), AZURE_STORAGE_CONNECTION_STRING, or else the default
// Azure credential (az login, a managed identity).
func (b *Bucket) openAzure(ctx context.Context, u *url.URL, workers int) (*blob.Bucket, error) {
	defaults := azureblob.NewDefaultServiceURLOptions()
	if defaults.AccountName == "" && u.Query().Get("storage_account") == "" {
		return nil, fmt.Errorf("no Azure storage account is named: set AZURE_STORAGE_ACCOUNT (with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or az login), or add storage_account=NAME to the URL, as in '%s'",
			b.WithParam("storage_account", "NAME"))
	}
	opener := &azureblob.URLOpener{ServiceURLOptions: *defaults, MakeClient: func(svc azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
		if defaults.SASToken != "" {
			// The SAS token goes with the service's URL: never to another.
			def, err := azureblob.NewServiceURL(defaults)
			if err != nil {
				return nil, err
			}
			if origin(string(def)) != origin(string(svc)) {
				return nil, errors.New("the URL's parameters name another service than the environment's, and AZURE_STORAGE_SAS_TOKEN is set: the token goes to its own service only; remove domain=, protocol=, localemu= or cdn= from the URL")
			}
		}
		return azureClient(svc, name, workers)
	}}
	return opener.OpenBucketURL(ctx, u)
}

// origin returns the scheme and host of a URL, lower case.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// azureClient makes the client of the container name of the service svc,
// with the credentials the environment gives, keeping a connection for
// each of workers requests at once.
func azureClient(svc azureblob.ServiceURL, name azureblob.ContainerName, workers int) (*container.Client, error) {
	transport := newTransport(workers)
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	opts := &container.ClientOptions{}
	opts.Transport = watchedClient{&http.Client{Transport: transport}}
	containerURL, err := url.JoinPath(string(svc), string(name))
	if err != nil {
		return nil, err
	}
	account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
	connection := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if connection == "" {
		connection = os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
	}
	switch {
	case account != "" && key != "":
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("reading AZURE_STORAGE_KEY: %w", err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return container.NewClientWithNoCredential(containerURL, opts) // the token is in svc
	case connection != "":
		return container.NewClientFromConnectionString(connection, string(name), opts)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, &BucketError{Kind: NoCredentials, Op: "finding credentials", Err: err}
	}
	return container.NewClient(containerURL, cred, opts)
}
