
,
xPlaceholder*
dtype0*
shape:
/
sizePlaceholder*
dtype0*
shape:
Y
resizeResizeBilinearxsize*
T0*
align_corners(*
half_pixel_centers("ª