/* (the 16-bit formats are not needed to fail) */
