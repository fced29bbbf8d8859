"""mlxir: a compiler from torch.export programs to MLX."""
