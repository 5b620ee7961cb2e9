"""GitHub: the API seam, its clients and pacing, webhook events, a review's inputs, delegation,
publishing."""
