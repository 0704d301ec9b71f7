/* (the lattice tables are not needed to fail) */
