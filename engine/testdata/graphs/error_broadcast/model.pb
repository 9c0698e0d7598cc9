
,
aPlaceholder*
dtype0*
shape:
,
bPlaceholder*
dtype0*
shape:

addAddV2ab*
T0"ª