"""Command-line tools: ``python -m neomx.tools.im2rec`` (MXNet's ``tools/im2rec.py``)."""
