
,
xPlaceholder*
dtype0*
shape:
,
iPlaceholder*
dtype0*
shape:
/
op
SegmentSumxi*
Tindices0*
T0"ª