"""The edges: HTTP gateway, dispatch to executors, CLI and client.

Routes decode, call and encode; scoring logic lives in `verifiers`.
"""
