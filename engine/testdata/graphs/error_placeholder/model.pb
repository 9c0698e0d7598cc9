
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:

mulMulab*
T0"ª