package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// An s3:// bucket is opened with an AWS config of publish's own, rather
// than by gocloud.dev's URL opener: the SDK logs nothing to stderr (its
// "falling back to IMDSv1" warning, among others: publish says what
// went wrong itself), and it tries each request once, so that publish's
// retries are the only ones, each said (see retry). It reads the
// parameters gocloud.dev/blob/s3blob reads, with the same meanings.

// s3Params are the parameters of an s3:// URL, read.
type s3Params struct {
	region, endpoint, profile, role string
	pathStyle, disableHTTPS         *bool
	accelerate, anonymous           bool
	dualStack, fips                 bool
	sse                             types.ServerSideEncryption
	kmsKey                          string
	requestChecksum                 aws.RequestChecksumCalculation
	responseChecksum                aws.ResponseChecksumValidation
}

// readS3Params reads the parameters of an s3:// URL (prefix= left out).
func readS3Params(q url.Values) (*s3Params, error) {
	p := &s3Params{}
	boolean := func(key, value string) (bool, error) {
		v, err := strconv.ParseBool(value)
		if err != nil {
			return false, fmt.Errorf("invalid value for %q: %q is not true or false", key, value)
		}
		return v, nil
	}
	for key, values := range q {
		value := values[0]
		var err error
		switch key {
		case "region":
			p.region = value
		case "endpoint":
			p.endpoint = value
		case "profile":
			p.profile = value
		case "use_path_style", "s3ForcePathStyle", "hostname_immutable":
			var v bool
			if v, err = boolean(key, value); err == nil && (v || p.pathStyle == nil) {
				p.pathStyle = &v
			}
		case "disable_https":
			var v bool
			v, err = boolean(key, value)
			p.disableHTTPS = &v
		case "accelerate":
			p.accelerate, err = boolean(key, value)
		case "anonymous":
			p.anonymous, err = boolean(key, value)
		case "dualstack":
			p.dualStack, err = boolean(key, value)
		case "fips":
			p.fips, err = boolean(key, value)
		case "role":
			if !strings.HasPrefix(value, "arn:") {
				err = fmt.Errorf("invalid value for \"role\": %q is not an ARN (arn:…)", value)
			}
			p.role = value
		case "ssetype":
			err = fmt.Errorf("invalid value for %q: %q: want one of %v", key, value, types.ServerSideEncryptionAes256.Values())
			for _, v := range types.ServerSideEncryptionAes256.Values() {
				if strings.EqualFold(string(v), value) {
					p.sse, err = v, nil
				}
			}
		case "kmskeyid":
			p.kmsKey = value
		case "request_checksum_calculation", "response_checksum_validation":
			var v aws.RequestChecksumCalculation
			switch strings.ToLower(value) {
			case "when_supported":
				v = aws.RequestChecksumCalculationWhenSupported
			case "when_required":
				v = aws.RequestChecksumCalculationWhenRequired
			default:
				err = fmt.Errorf("invalid value for %q: %q: want when_supported or when_required", key, value)
			}
			if key == "request_checksum_calculation" {
				p.requestChecksum = v
			} else {
				p.responseChecksum = aws.ResponseChecksumValidation(v)
			}
		case "rate_limiter_capacity", "awssdk":
			// Of the SDK's retries, which publish does not use; of the
			// SDK's version, of which there is one.
		default:
			err = fmt.Errorf("unknown query parameter %q", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// openS3 opens an s3:// bucket. Its credentials are looked for first, so
// that none found is said as such, before any request; a request to find
// its region is tried as pol says.
func (b *Bucket) openS3(ctx context.Context, pol policy, workers int) (*blob.Bucket, error) {
	p := b.s3
	opts := []func(*config.LoadOptions) error{
		config.WithLogger(logging.Nop{}),
		config.WithClientLogMode(0),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		// The SDK's client (which AWS_CA_BUNDLE configures), keeping a
		// connection for each worker (see keepConns).
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { keepConns(tr, workers) })),
	}
	if p.region != "" {
		opts = append(opts, config.WithRegion(p.region))
	}
	if p.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(p.profile))
	}
	if p.dualStack {
		opts = append(opts, config.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
	}
	if p.fips {
		opts = append(opts, config.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
	}
	if p.anonymous {
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	if p.requestChecksum != 0 {
		opts = append(opts, config.WithRequestChecksumCalculation(p.requestChecksum))
	}
	if p.responseChecksum != 0 {
		opts = append(opts, config.WithResponseChecksumValidation(p.responseChecksum))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the AWS configuration: %w", err)
	}
	if p.role != "" {
		if cfg.Region == "" {
			return nil, &BucketError{Kind: WrongRegion, Op: "assuming the role " + p.role, Err: errors.New("no region")}
		}
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), p.role))
	}
	if !p.anonymous {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &BucketError{Kind: NoCredentials, Op: "finding credentials", Err: err}
		}
	}
	opts3 := func(o *s3.Options) {
		o.HTTPClient = watchedClient{o.HTTPClient} // the SDK's, as the config made it
		o.UseAccelerate = p.accelerate
		if p.pathStyle != nil {
			o.UsePathStyle = *p.pathStyle
		}
		if p.disableHTTPS != nil {
			o.EndpointOptions.DisableHTTPS = *p.disableHTTPS
		}
		if p.endpoint != "" {
			e := p.endpoint
			if !strings.Contains(e, "://") {
				e = "https://" + e
				if p.disableHTTPS != nil && *p.disableHTTPS {
					e = "http://" + p.endpoint
				}
			}
			o.BaseEndpoint = aws.String(e)
		}
	}
	if cfg.Region == "" {
		return nil, b.askRegion(ctx, pol, s3.NewFromConfig(cfg, opts3, func(o *s3.Options) { o.Region = probeRegion }))
	}
	client := s3.NewFromConfig(cfg, opts3)
	return s3blob.OpenBucket(ctx, client, b.Name, &s3blob.Options{
		EncryptionType:             p.sse,
		KMSEncryptionID:            p.kmsKey,
		RequestChecksumCalculation: cfg.RequestChecksumCalculation,
	})
}

// probeRegion is the region askRegion signs its request for: the one of
// most S3-compatible servers, and the one Amazon S3 answers for any
// bucket with the bucket's own.
const probeRegion = "us-east-1"

// askRegion finds the region of a bucket whose URL sets none (nor does
// the environment), from the service's answer to a request signed for
// probeRegion, tried as pol says: the error says which region to add;
// or that the service cannot be reached, or did not answer, or that the
// bucket does not exist or the credentials are missing, as any request
// would say it.
func (b *Bucket) askRegion(ctx context.Context, pol policy, client *s3.Client) error {
	const op = "finding the bucket's region"
	err := pol.retry(ctx, op, 0, func(ctx context.Context, _ func(int)) error {
		_, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name), MaxKeys: aws.Int32(1)})
		return err
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	be := &BucketError{Kind: WrongRegion, Op: op, Err: err}
	if err == nil {
		be.Region, be.Err = probeRegion, errors.New("it answers requests signed for "+probeRegion)
		return be
	}
	switch k := kindOf(err); {
	case regionOf(err) != "":
		be.Region = regionOf(err)
	case k == Unreachable || k == TimedOut || k == NoBucket || k == NoCredentials:
		be.Kind = k
	}
	return be
}
