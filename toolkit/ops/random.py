"""Random ops: rand, randn, randint, randperm, normal, bernoulli, multinomial and in-place fills."""
