"""Reward models: loading, dynamic batching, packing and scoring kernels.

Knows nothing of verifiers or the service.
"""
