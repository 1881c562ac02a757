"""Provide utilities for text data processing."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """Counts tokens in the specified string.

    Tokens are separated by ``token_delim`` or ``seq_delim`` (both regular expressions, as MXNet
    joins them with ``|``); empty tokens are dropped.

    Parameters
    ----------
    source_str : str
        A source string of tokens.
    token_delim : str, default ' '
        A token delimiter.
    seq_delim : str, default '\\\\n'
        A sequence delimiter.
    to_lower : bool, default False
        Whether to convert the source source_str to the lower case.
    counter_to_update : collections.Counter or None, default None
        The collections.Counter instance to be updated with the token counts of `source_str`. If
        None, return a new collections.Counter instance counting tokens from `source_str`.

    Returns
    -------
    collections.Counter

    Examples
    --------
    >>> source_str = ' Life is great ! \\n life is good . \\n'
    >>> sorted(count_tokens_from_str(source_str, ' ', '\\n', True).items())
    [('!', 1), ('.', 1), ('good', 1), ('great', 1), ('is', 2), ('life', 2)]
    """
    tokens = filter(None, re.split(token_delim + "|" + seq_delim, source_str))
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
