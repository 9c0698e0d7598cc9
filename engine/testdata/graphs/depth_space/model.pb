
:
xPlaceholder*
dtype0*
shape:$
:
qPlaceholder*
dtype0*
shape:	
I
d2s2DepthToSpacex*
T0*

block_size*
data_formatNHWC
I
d2s3DepthToSpacex*
T0*

block_size*
data_formatNHWC
I
s2d2SpaceToDepthx*
T0*

block_size*
data_formatNHWC
I
s2d3SpaceToDepthx*
T0*

block_size*
data_formatNHWC
Q
DepthToSpaceDepthToSpacex*
T0*

block_size*
data_formatNHWC
Y
	roundtripSpaceToDepthDepthToSpace*
T0*

block_size*
data_formatNHWC
L
d2s_intDepthToSpaceq*
T0*

block_size*
data_formatNHWC
S
DepthToSpace_1DepthToSpaceq*
T0*

block_size*
data_formatNHWC
Y
s2d_intSpaceToDepthDepthToSpace_1*
T0*

block_size*
data_formatNHWC"ª