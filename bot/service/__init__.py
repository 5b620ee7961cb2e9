"""The GitHub App as a service: webhook front door, queue, leases, pacing, worker."""
