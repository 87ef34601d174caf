"""The board and its move lists, for the kernels: bitboard primitives (bits), the move codes (moves),
the Zobrist keys (zobrist), the attack flags every evaluation carries (flags), checks and threats (checks),
static exchange (see), the capture, quiet and evasion lists (captures), and the root's board over
python-chess (searchboard)."""
