
,
xPlaceholder*
dtype0*
shape:
2
blockPlaceholder*
dtype0*
shape:
5
padsPlaceholder*
dtype0*
shape
:
O
opBatchToSpaceNDxblockpads*
Tblock_shape0*
Tcrops0*
T0"ª