"""Neural-network ops that are not plain elementwise: softmax and log_softmax (more come with toolkit.nn)."""
