"""The Python fast path: one pre-started interpreter inside a bwrap sandbox forks a fresh,
namespaced child per case (see `server` for what runs inside, `host` for the caller's side)."""
