
,
xPlaceholder*
dtype0*
shape:

LogLogx*
T0
;
checkCheckNumericsLog*
T0*
message
log of x"ª