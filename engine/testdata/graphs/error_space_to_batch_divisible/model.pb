
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
R
opSpaceToBatchNDxblockpads*
Tblock_shape0*
	Tpaddings0*
T0"ª