
,
xPlaceholder*
dtype0*
shape:
,
wPlaceholder*
dtype0*
shape:
v
convConv3Dxw*
T0*
data_formatNDHWC*
	dilations	
*
paddingSAME*
strides	
"ª