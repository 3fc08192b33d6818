"""Tools for library authors: gradcheck and cross-carrier agreement (filled in by the testing layer)."""
