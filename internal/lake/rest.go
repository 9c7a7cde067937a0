package lake

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/iceberg-go/catalog/rest"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/redact"
)

func init() { providers[v1.CatalogREST] = openREST }

// openREST opens an Iceberg REST catalog at c.URI. The server places tables and keeps them
// apart: a commit that lost a race is its CommitFailedException (HTTP 409), which iceberg-go
// reports as table.ErrCommitFailed and the protocol stages again. Secrets come from the
// environment variables the spec names, never from the spec.
func openREST(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error) {
	if c.URI == "" {
		return nil, ldperr.Configf("", "catalog %s of type rest needs uri: the server's base URL, such as http://127.0.0.1:8181", c.Identifier)
	}
	props := S3Properties(c.Properties)
	opts := []rest.Option{rest.WithAdditionalProps(props)}
	if c.Warehouse != "" {
		opts = append(opts, rest.WithWarehouseLocation(c.Warehouse))
	}
	secret := func(key, name string) (string, error) {
		if name == "" {
			return "", nil
		}
		v := os.Getenv(name)
		if v == "" {
			return "", ldperr.Configf("", "catalog %s: %s names the environment variable %s, which is not set: export it before running ldp", c.Identifier, key, name)
		}
		redact.Secret(v)
		return v, nil
	}
	token, err := secret("token_env", c.TokenEnv)
	if err != nil {
		return nil, err
	}
	if token != "" {
		opts = append(opts, rest.WithOAuthToken(token))
	}
	cred, err := secret("credential_env", c.CredentialEnv)
	if err != nil {
		return nil, err
	}
	if cred != "" {
		opts = append(opts, rest.WithCredential(cred))
	}
	if err := os.MkdirAll(WarehouseDir(c, baseDir), 0o755); err != nil {
		return nil, err
	}
	cat, err := rest.NewCatalog(ctx, c.Identifier, c.URI, opts...)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s at %s: %s", c.Identifier, redact.String(c.URI), redact.String(err.Error()))
	}
	return &Catalog{Identifier: c.Identifier, Warehouse: c.Warehouse, props: props, cat: cat, shared: true}, nil
}
