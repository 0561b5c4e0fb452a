# feedgen in a container: a static binary on a distroless image.
#   docker build -t feedgen .
#   docker run --rm -v "$PWD:/site" -w /site feedgen build --strict
#   docker run --rm -p 8080:8080 -e FEEDGEN_BUCKET_URL='s3://BUCKET?region=REGION' \
#     -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY feedgen serve --addr 0.0.0.0:8080
# The last serves the build published to the bucket (docs/deploying.md).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/feedgen ./cmd/feedgen

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/feedgen /usr/local/bin/feedgen
WORKDIR /site
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/feedgen"]
CMD ["--help"]
