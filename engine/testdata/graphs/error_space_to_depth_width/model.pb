
,
xPlaceholder*
dtype0*
shape:
G
opSpaceToDepthx*
T0*

block_size*
data_formatNHWC"ª