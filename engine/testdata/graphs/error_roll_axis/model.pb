
,
xPlaceholder*
dtype0*
shape:
,
kPlaceholder*
dtype0*
shape:
3
ConstConst*
dtype0*
valueB:
;
opRollxConstk*
Taxis0*
Tshift0*
T0"ª