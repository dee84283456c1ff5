"""The baseline endpoint and what it serves: scripted policies answering through the real pipeline.

- `endpoint` is the OpenAI-compatible server of every registered environment's policies,
  ``noisy-<p>`` included, each request served by the mark it starts with;
- `rollout_seeding` tells which rollout of a group a request is, and seeds its noisy policy;
- `shortcuts` searches the policies that read only surface features for the most they earn.

Layer 2: imports `policy`, `plugins` and `tasksets`.
"""
