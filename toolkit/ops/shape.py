"""Shape ops that copy data into a new buffer: cat, stack, repeat, tile, flip, roll, tril/triu, diag."""
