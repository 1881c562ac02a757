"""Text utilities (``mx.contrib.text``): token counting, a ``Vocabulary`` indexing tokens and
token embeddings (pretrained GloVe/fastText files placed by hand, or custom files)."""
from . import utils
from . import vocab
from . import embedding
