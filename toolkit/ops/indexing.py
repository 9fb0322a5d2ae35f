"""Indexing ops: index, index_put, gather, scatter, index_select, index_add, masked_*, take."""
