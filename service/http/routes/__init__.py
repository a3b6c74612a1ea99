"""One route module per resource; each stays a few lines: decode, call, encode."""
