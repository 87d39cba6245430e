#ifndef STORETYPEDEFS_H_
#define STORETYPEDEFS_H_

typedef int metric_type;
typedef float store_value_type;
typedef unsigned long long int ullint;
typedef struct { ullint x; ullint y; } ullint2;

#endif /* STORETYPEDEFS_H_ */
