"""In-process handler tests, one module per API key (a package: kproto has a test_api_versions too)."""
