"""The engine's services around the search: Lazy SMP helpers (smp), the first start's compile (warmup),
the quick search a cold start plays with (quick), the opening book (book), the Syzygy tablebases
(syzygy) and the bench (bench)."""
