"""The GitHub App: webhook service, durable queue and worker, GitHub client and publishers."""
