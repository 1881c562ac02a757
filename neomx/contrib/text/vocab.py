"""Text token indexer (``mx.contrib.text.vocab``)."""
from __future__ import annotations

import collections

__all__ = ["Vocabulary"]

UNKNOWN_IDX = 0  # the unknown token's index, always


class Vocabulary:
    """Indexing for text tokens.

    Index 0 is the unknown token, then the reserved tokens in order, then the keys of
    ``counter`` by decreasing frequency (ties in token order) that occur at least ``min_freq``
    times, at most ``most_freq_count`` of them.

    Parameters
    ----------
    counter : collections.Counter or None, default None
        Counts text token frequencies in the text data.
    most_freq_count : None or int, default None
        The maximum possible number of the most frequent tokens in the keys of `counter` that can
        be indexed (None: no limit).
    min_freq : int, default 1
        The minimum frequency required for a token in the keys of `counter` to be indexed.
    unknown_token : hashable object, default '<unk>'
        The representation for any unknown token.
    reserved_tokens : list of hashable objects or None, default None
        A list of reserved tokens that will always be indexed, such as special symbols.

    Examples
    --------
    >>> import collections
    >>> from neomx.contrib.text.vocab import Vocabulary
    >>> v = Vocabulary(collections.Counter(['a', 'b', 'b', 'c']), reserved_tokens=['<pad>'])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'b', 'a', 'c']
    >>> v.to_indices(['b', 'zzz']), v.to_tokens(3)
    ([2, 0], 'a')
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        assert min_freq > 0, "`min_freq` must be set to a positive value."
        if reserved_tokens is not None:
            reserved_token_set = set(reserved_tokens)
            assert unknown_token not in reserved_token_set, \
                "`reserved_token` cannot contain `unknown_token`."
            assert len(reserved_token_set) == len(reserved_tokens), \
                "`reserved_tokens` cannot contain duplicate reserved tokens."
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count,
                                     min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token, reserved_tokens):
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]
        self._reserved_tokens = None if reserved_tokens is None else reserved_tokens[:]
        if reserved_tokens is not None:
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count,
                            min_freq):
        assert isinstance(counter, collections.Counter), \
            "`counter` must be an instance of collections.Counter."
        special = set(reserved_tokens) if reserved_tokens is not None else set()
        special.add(unknown_token)
        token_freqs = sorted(counter.items(), key=lambda x: x[0])
        token_freqs.sort(key=lambda x: x[1], reverse=True)  # stable: ties stay in token order
        token_cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in token_freqs:
            if freq < min_freq or len(self._idx_to_token) == token_cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self):
        return len(self.idx_to_token)

    @property
    def token_to_idx(self):
        """dict mapping str to int: A dict mapping each token to its index integer."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list of strs: the indexed tokens, list index = token index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """Converts a token or a list of tokens to indices (unknown tokens: 0)."""
        to_reduce = not isinstance(tokens, list)
        if to_reduce:
            tokens = [tokens]
        indices = [self.token_to_idx.get(token, UNKNOWN_IDX) for token in tokens]
        return indices[0] if to_reduce else indices

    def to_tokens(self, indices):
        """Converts an index or a list of indices to tokens.

        Raises
        ------
        ValueError
            An index is not an int or beyond the vocabulary.
        """
        to_reduce = not isinstance(indices, list)
        if to_reduce:
            indices = [indices]
        max_idx = len(self.idx_to_token) - 1
        tokens = []
        for idx in indices:
            if not isinstance(idx, int) or idx > max_idx:
                raise ValueError("Token index %d in the provided `indices` is invalid." % idx)
            tokens.append(self.idx_to_token[idx])
        return tokens[0] if to_reduce else tokens
